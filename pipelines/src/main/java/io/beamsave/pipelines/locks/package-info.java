/**
 * What a run keeps beside the images it writes and reads while it lives (locks, leases,
 * staging), and what finds and removes what runs that failed or were killed left there.
 */
package io.beamsave.pipelines.locks;
