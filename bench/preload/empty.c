/*
 * An empty library for bench/run's "preload" column: what any LD_PRELOAD
 * library costs before it does anything (its mappings copied at every
 * fork and torn down at exit, one more object in every symbol lookup,
 * ld.so's work at exec).  The floor under fakeenv's own cost.
 */
int fe_bench_empty;
