/*
 * Kernel test firmware: reads case records from the semihosting file cases.bin, runs each
 * through th_kcase_run (tests/kernels/driver/th_kcase.c, the same runner the host driver
 * uses) and writes the result records to results.bin; exits 0 when all were processed.
 *
 * Buffers of one case come from a static arena, each followed by guard bytes that are
 * checked after the kernel ran (no ASan on the target). Every kernel call is bracketed by
 * th_mark_start/th_mark_stop, so the QEMU icount plugin counts exactly one call per case.
 */
#include <stdint.h>
#include <string.h>

#include "th_board.h"
#include "th_kcase.h"

#ifndef TH_KTEST_RECORD_CAP
#define TH_KTEST_RECORD_CAP 32768
#endif
#ifndef TH_KTEST_RESULT_CAP
#define TH_KTEST_RESULT_CAP 16384
#endif
#ifndef TH_KTEST_ARENA_CAP
#define TH_KTEST_ARENA_CAP 49152
#endif

#define GUARD_BYTES 16
#define GUARD_VALUE 0xA5u
#define MAX_ALLOCS 16

#define EXIT_NO_CASES 2
#define EXIT_IO 3
#define EXIT_TOO_BIG 4

static uint8_t record_buf[TH_KTEST_RECORD_CAP] __attribute__((aligned(8)));
static uint8_t result_buf[TH_KTEST_RESULT_CAP] __attribute__((aligned(8)));
static uint8_t arena[TH_KTEST_ARENA_CAP] __attribute__((aligned(16)));

typedef struct {
    size_t used;
    size_t guard_at[MAX_ALLOCS];
    int count;
} bump_mem;

static void *bump_alloc(void *self, size_t size)
{
    bump_mem *m = self;
    const size_t start = (m->used + 15u) & ~(size_t)15u;
    if (m->count == MAX_ALLOCS || start + size + GUARD_BYTES > sizeof arena) {
        return NULL;
    }
    memset(arena + start + size, GUARD_VALUE, GUARD_BYTES);
    m->guard_at[m->count++] = start + size;
    m->used = start + size + GUARD_BYTES;
    return arena + start;
}

static void bump_release(void *self)
{
    bump_mem *m = self;
    m->used = 0;
    m->count = 0;
}

static int bump_guards(void *self)
{
    const bump_mem *m = self;
    for (int i = 0; i < m->count; i++) {
        for (size_t j = 0; j < GUARD_BYTES; j++) {
            if (arena[m->guard_at[i] + j] != GUARD_VALUE) {
                return 0;
            }
        }
    }
    return 1;
}

void th_kcase_before_kernel(void)
{
    th_mark_start();
}

void th_kcase_after_kernel(void)
{
    th_mark_stop();
}

static int read_all(int fd, uint8_t *buf, size_t n)
{
    return th_sh_read(fd, buf, n) == (long)n;
}

int main(void)
{
    th_board_init();
    const int in = th_sh_open("cases.bin", TH_SH_MODE_R);
    const int out = th_sh_open("results.bin", TH_SH_MODE_W);
    if (in < 0 || out < 0) {
        th_sh_puts("kernel_tests: cannot open cases.bin / results.bin\n");
        th_exit(EXIT_NO_CASES);
    }
    bump_mem mem = {0, {0}, 0};
    const th_kalloc kalloc = {bump_alloc, bump_release, bump_guards, &mem};
    for (;;) {
        const long got = th_sh_read(in, record_buf, 8);
        if (got == 0) {
            break;
        }
        if (got != 8) {
            th_exit(EXIT_IO);
        }
        const uint32_t total = (uint32_t)record_buf[4] | ((uint32_t)record_buf[5] << 8) |
                               ((uint32_t)record_buf[6] << 16) |
                               ((uint32_t)record_buf[7] << 24);
        if (total < 8 || total > sizeof record_buf) {
            th_sh_puts("kernel_tests: case record larger than the record buffer\n");
            th_exit(EXIT_TOO_BIG);
        }
        if (!read_all(in, record_buf + 8, total - 8)) {
            th_exit(EXIT_IO);
        }
        const size_t n = th_kcase_run(record_buf, total, &kalloc, result_buf, sizeof result_buf);
        if (n == 0) {
            th_sh_puts("kernel_tests: result larger than the result buffer\n");
            th_exit(EXIT_TOO_BIG);
        }
        if (th_sh_write(out, result_buf, n) != (long)n) {
            th_exit(EXIT_IO);
        }
    }
    th_sh_close(in);
    th_sh_close(out);
    th_exit(0);
}
