/**
 * What a run's launcher reads back from its workers while they run: live progress counters
 * ({@link io.beamsave.transforms.run.LiveProgress}) and the per-stage metrics of the report and
 * the metrics file ({@link io.beamsave.transforms.run.StageMetrics}).
 */
package io.beamsave.transforms.run;
