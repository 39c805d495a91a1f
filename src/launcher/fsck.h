/*
 * fakeenv fsck: check a journal file, or salvage the records of a damaged
 * one that can be trusted into a new file.  Reads FILE only; never writes
 * it, never replaces an existing file.
 */
#ifndef FE_LAUNCHER_FSCK_H
#define FE_LAUNCHER_FSCK_H

/*
 * `fakeenv fsck [--salvage [-o OUT]] FILE`, with argv[0] "fsck" and the
 * arguments after it.  Returns the exit status:
 *   0  FILE is a sound journal (a report on stdout), or salvage wrote OUT;
 *   1  FILE is damaged (why on stderr), or salvage could trust nothing;
 *   2  bad usage, FILE unreadable, OUT exists or cannot be written.
 */
int fe_fsck_main(int argc, char **argv);

#endif
