/*
 * Memory for what an exec is handed, which a vfork child's parent gets
 * back later (exec_mem.c).  Async-signal-safe; errno untouched but on
 * failure.
 */
#ifndef FE_SHIM_EXEC_MEM_H
#define FE_SHIM_EXEC_MEM_H

#include <stddef.h>

/* size bytes of fresh memory, or NULL (errno set by mmap). */
void *fe_exec_mem_get(size_t size);

/* Give back what fe_exec_mem_get() gave, once the exec or spawn it was
 * for has returned. */
void fe_exec_mem_put(void *mem, size_t size);

#endif
