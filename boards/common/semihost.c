/*
 * ARM semihosting (BKPT 0xAB on M-profile) for QEMU with
 * -semihosting-config enable=on,target=native: exit codes and file I/O on
 * the machine running QEMU, which is far faster than the emulated UART for
 * moving test data.
 */
#include <string.h>

#include "th_board.h"

#if defined(TH_SEMIHOSTING) && !TH_SEMIHOSTING
/*
 * Boards without a semihosting host (real hardware, Renode; board.json "semihosting": false):
 * BKPT 0xAB with no debugger attached escalates to HardFault, and a debugger that does not
 * serve semihosting just halts. So: no files, no console, and th_exit announces the code on
 * the UART ("th_exit <code>") and parks the core.
 */
void th_exit(int code)
{
    char num[24];
    uint64_t mag = code < 0 ? (uint64_t)(-(int64_t)code) : (uint64_t)code;
    th_uart_puts(code < 0 ? "th_exit -" : "th_exit ");
    th_fmt_u64(num, mag);
    th_uart_puts(num);
    th_uart_puts("\n");
    for (;;) {
        __asm__ volatile("wfi");
    }
}

void th_sh_puts(const char *s)
{
    (void)s;
}

int th_sh_open(const char *path, int mode)
{
    (void)path;
    (void)mode;
    return -1;
}

long th_sh_read(int handle, void *buf, size_t len)
{
    (void)handle;
    (void)buf;
    (void)len;
    return -1;
}

long th_sh_write(int handle, const void *buf, size_t len)
{
    (void)handle;
    (void)buf;
    (void)len;
    return -1;
}

long th_sh_flen(int handle)
{
    (void)handle;
    return -1;
}

int th_sh_close(int handle)
{
    (void)handle;
    return -1;
}

#else /* semihosting (QEMU) */

enum {
    SH_SYS_OPEN = 0x01,
    SH_SYS_CLOSE = 0x02,
    SH_SYS_WRITE0 = 0x04,
    SH_SYS_WRITE = 0x05,
    SH_SYS_READ = 0x06,
    SH_SYS_FLEN = 0x0C,
    SH_SYS_EXIT = 0x18,
    SH_SYS_EXIT_EXTENDED = 0x20,
    SH_ADP_STOPPED_APPLICATION_EXIT = 0x20026
};

static int32_t sh_call(int32_t op, const void *arg)
{
    register int32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    /* The "memory" clobber: the host reads and writes our buffers. */
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void th_exit(int code)
{
    /* SYS_EXIT_EXTENDED carries the code; plain SYS_EXIT only knows
     * "success" vs "failure", so fall back to it if the first returns. */
    uint32_t block[2] = {SH_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    (void)sh_call(SH_SYS_EXIT_EXTENDED, block);
    (void)sh_call(SH_SYS_EXIT, (const void *)(uintptr_t)SH_ADP_STOPPED_APPLICATION_EXIT);
    for (;;) {
        __asm__ volatile("wfi");
    }
}

void th_sh_puts(const char *s)
{
    (void)sh_call(SH_SYS_WRITE0, s);
}

int th_sh_open(const char *path, int mode)
{
    uint32_t block[3] = {(uint32_t)(uintptr_t)path, (uint32_t)mode, (uint32_t)strlen(path)};
    int32_t h = sh_call(SH_SYS_OPEN, block);
    return h < 0 ? -1 : (int)h;
}

long th_sh_read(int handle, void *buf, size_t len)
{
    uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buf, (uint32_t)len};
    int32_t not_read = sh_call(SH_SYS_READ, block);
    /* SYS_READ returns the number of bytes NOT read. */
    if (not_read < 0 || (uint32_t)not_read > len) {
        return -1;
    }
    return (long)(len - (size_t)not_read);
}

long th_sh_write(int handle, const void *buf, size_t len)
{
    uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buf, (uint32_t)len};
    int32_t not_written = sh_call(SH_SYS_WRITE, block);
    if (not_written < 0 || (uint32_t)not_written > len) {
        return -1;
    }
    return (long)(len - (size_t)not_written);
}

long th_sh_flen(int handle)
{
    uint32_t block[1] = {(uint32_t)handle};
    int32_t n = sh_call(SH_SYS_FLEN, block);
    return n < 0 ? -1 : (long)n;
}

int th_sh_close(int handle)
{
    uint32_t block[1] = {(uint32_t)handle};
    return sh_call(SH_SYS_CLOSE, block) == 0 ? 0 : -1;
}

#endif /* TH_SEMIHOSTING */
