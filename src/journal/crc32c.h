/*
 * CRC-32C's two implementations, apart so that tests can hold them to the
 * same answers.  fe_crc32c() (journal.h) picks one per call; nothing else
 * needs this header.
 */
#ifndef FE_JOURNAL_CRC32C_H
#define FE_JOURNAL_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slice-by-8 in portable C; the same contract as fe_crc32c(). */
uint32_t fe_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* True when this CPU has the SSE4.2 crc32 instruction (false off x86-64). */
bool fe_crc32c_hw_ok(void);

/* The crc32 instruction; only when fe_crc32c_hw_ok(), else it faults. */
uint32_t fe_crc32c_hw(uint32_t crc, const void *buf, size_t len);

#endif
