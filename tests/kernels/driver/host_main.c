/* host_main.c - kernel test driver for the host: case records on stdin, results on stdout.
 *
 * Built with -fsanitize=address,undefined (tests/kernels/harness.py), so every buffer is
 * malloc'ed at its exact size: a kernel reading or writing one byte outside its arrays
 * stops the driver with an ASan report, which the Python side turns into a test failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "th_kcase.h"

#define MAX_ALLOCS 16

typedef struct {
    void *ptr[MAX_ALLOCS];
    int count;
} host_mem;

static void *host_alloc(void *self, size_t size)
{
    host_mem *m = self;
    if (m->count == MAX_ALLOCS) {
        return NULL;
    }
    void *p = malloc(size > 0 ? size : 1);
    m->ptr[m->count++] = p;
    return p;
}

static void host_release(void *self)
{
    host_mem *m = self;
    for (int i = 0; i < m->count; i++) {
        free(m->ptr[i]);
    }
    m->count = 0;
}

static int host_guards(void *self)
{
    (void)self;
    return 1; /* ASan guards the host */
}

void th_kcase_before_kernel(void) {}
void th_kcase_after_kernel(void) {}

static int read_exact(uint8_t *buf, size_t n)
{
    return fread(buf, 1, n, stdin) == n;
}

int main(void)
{
    host_mem mem = {{0}, 0};
    const th_kalloc kalloc = {host_alloc, host_release, host_guards, &mem};
    uint8_t header[8];
    while (read_exact(header, sizeof header)) {
        const uint32_t total = (uint32_t)header[4] | ((uint32_t)header[5] << 8) |
                               ((uint32_t)header[6] << 16) | ((uint32_t)header[7] << 24);
        if (total < 8 || total > (1u << 28)) {
            fprintf(stderr, "th_kdriver: bad record length %u\n", total);
            return 2;
        }
        uint8_t *record = malloc(total);
        if (record == NULL) {
            return 3;
        }
        for (int i = 0; i < 8; i++) {
            record[i] = header[i];
        }
        if (!read_exact(record + 8, total - 8)) {
            free(record);
            return 2;
        }
        const size_t out_cap = (size_t)1 << 24; /* th_kcase_run reports 0 if too small */
        uint8_t *out = malloc(out_cap);
        const size_t n = th_kcase_run(record, total, &kalloc, out, out_cap);
        free(record);
        if (n == 0) {
            fprintf(stderr, "th_kdriver: result does not fit %zu bytes\n", out_cap);
        }
        if (n == 0 || fwrite(out, 1, n, stdout) != n || fflush(stdout) != 0) {
            free(out);
            return 4;
        }
        free(out);
    }
    return 0;
}
