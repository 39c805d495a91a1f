/*
 * `fakeenv export`: a session's state written as a manifest that image
 * builders read without any preload (mtree for bsdtar, a device table for
 * genext2fs and makedevs, a pseudo file for mksquashfs).
 */
#ifndef FE_LAUNCHER_EXPORT_H
#define FE_LAUNCHER_EXPORT_H

/* argv[0] is "export"; returns the exit status (0, 2 for usage, 125). */
int fe_export_main(int argc, char **argv);

#endif
