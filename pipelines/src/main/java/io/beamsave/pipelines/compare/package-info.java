/**
 * Measuring codecs and transfer strategies on the operator's own data and link: {@code bench}
 * (local saves per codec) and {@code compare} (save + upload strategies per link speed), with
 * their report as a table, CSV, JSON, a chart and an HTML page.
 */
package io.beamsave.pipelines.compare;
