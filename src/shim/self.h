/*
 * Included last, after "#define FE_HERE_<family> 1", by each file of
 * wrappers: the fe_self_<name> alias (shim.h) of every wrapper that a
 * SYSCALL row of wrap.def routes a raw number to from that family.  An
 * alias has to be made in the file that defines its target, so the table
 * is read once per file and each row kept only where its family is HERE.
 * No include guard: each file includes it once, at its end.
 */

/* 1 when x is defined as 1, else 0 (the kernel's IS_ENABLED() test). */
#define FE_ARG_PLACEHOLDER_1 0,
#define FE_SECOND_ARG(ignored, val, ...) val
#define FE_IS_ONE(x) FE_IS_ONE_(x)
#define FE_IS_ONE_(x) FE_IS_ONE__(FE_ARG_PLACEHOLDER_##x)
#define FE_IS_ONE__(arg_or_junk) FE_SECOND_ARG(arg_or_junk 1, 0, 0)

#define FE_SELF_IF(here, name) FE_SELF_IF_(here, name)
#define FE_SELF_IF_(here, name) FE_SELF_IF_##here(name)
#define FE_SELF_IF_1(name) FE_SELF(name);
#define FE_SELF_IF_0(name)

#define SYSCALL(family, nr, name, args) \
	FE_SELF_IF(FE_IS_ONE(FE_HERE_##family), name)
#include "wrap.def"
