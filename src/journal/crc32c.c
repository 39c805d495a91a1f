/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), as iSCSI, ext4
 * and btrfs use it.  Pure functions over bytes: any alignment, any thread.
 * The tables are built on first use, once, under an atomic flag (no
 * pthread: the daemon links libc alone, and a constructor would not cover
 * a caller running before ours).
 */
#include "crc32c.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "journal.h"

#define POLY 0x82f63b78u

/* tab[k][b]: the CRC of byte b followed by k zero bytes. */
static uint32_t tab[8][256];
static atomic_int tab_state; /* 0: empty, 1: being built, 2: ready */

static void build_tables(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? POLY : 0);
		tab[0][b] = c;
	}
	for (uint32_t b = 0; b < 256; b++)
		for (int k = 1; k < 8; k++)
			tab[k][b] =
			    (tab[k - 1][b] >> 8) ^ tab[0][tab[k - 1][b] & 0xff];
}

/* Returns once the tables are complete, whichever thread built them. */
static void tables_ready(void)
{
	int empty = 0;

	if (atomic_load_explicit(&tab_state, memory_order_acquire) == 2)
		return;
	if (atomic_compare_exchange_strong(&tab_state, &empty, 1)) {
		build_tables();
		atomic_store_explicit(&tab_state, 2, memory_order_release);
		return;
	}
	/* Another thread is building: 8 KiB of arithmetic, microseconds. */
	while (atomic_load_explicit(&tab_state, memory_order_acquire) != 2)
		sched_yield();
}

static uint32_t load32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint32_t fe_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t c = ~crc;

	tables_ready();
	while (len >= 8) {
		uint32_t lo = c ^ load32(p), hi = load32(p + 4);

		c = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
		    tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
		    tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		    tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

bool fe_crc32c_hw_ok(void)
{
	return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2"))) uint32_t
fe_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = (uint32_t)~crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8); /* x86 is little-endian, as the CRC wants */
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#else
bool fe_crc32c_hw_ok(void)
{
	return false;
}

uint32_t fe_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	return fe_crc32c_sw(crc, buf, len);
}
#endif

uint32_t fe_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return fe_crc32c_hw_ok() ? fe_crc32c_hw(crc, buf, len)
				 : fe_crc32c_sw(crc, buf, len);
}
