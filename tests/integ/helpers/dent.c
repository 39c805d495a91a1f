/*
 * dent: directory entries through each readdir entry point.
 *   dent CALL DIR    prints "NAME TYPE" for each entry but . and ..,
 *                    TYPE one of reg dir chr blk fifo sock lnk unknown
 * CALL: readdir readdir64 readdir_r readdir64_r
 */
#include "helper.h"

#include <dirent.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static const char *tname(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return "reg";
	case DT_DIR:
		return "dir";
	case DT_CHR:
		return "chr";
	case DT_BLK:
		return "blk";
	case DT_FIFO:
		return "fifo";
	case DT_SOCK:
		return "sock";
	case DT_LNK:
		return "lnk";
	default:
		return "unknown";
	}
}

static void show(const char *name, unsigned char t)
{
	if (strcmp(name, ".") && strcmp(name, ".."))
		printf("%s %s\n", name, tname(t));
}

int main(int argc, char **argv)
{
	DIR *d;

	if (argc != 3)
		return usage("dent CALL DIR");
	d = opendir(argv[2]);
	if (!d)
		return err_out(errno);
	for (;;) {
		const char *c = argv[1];

		errno = 0;
		if (!strcmp(c, "readdir")) {
			struct dirent *e = readdir(d);

			if (!e)
				break;
			show(e->d_name, e->d_type);
		} else if (!strcmp(c, "readdir64")) {
			struct dirent64 *e = readdir64(d);

			if (!e)
				break;
			show(e->d_name, e->d_type);
		} else if (!strcmp(c, "readdir_r")) {
			struct dirent buf, *e;

			if (readdir_r(d, &buf, &e) != 0 || !e)
				break;
			show(e->d_name, e->d_type);
		} else if (!strcmp(c, "readdir64_r")) {
			struct dirent64 buf, *e;

			if (readdir64_r(d, &buf, &e) != 0 || !e)
				break;
			show(e->d_name, e->d_type);
		} else {
			return usage("dent CALL DIR");
		}
	}
	if (errno)
		return err_out(errno);
	closedir(d);
	return 0;
}
