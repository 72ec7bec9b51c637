/**
 * Running a pipeline for the command line: Beam options with production defaults, progress from
 * metrics while it runs, its figures afterwards, and its failure turned into one line.
 */
package io.beamsave.pipelines.runner;
