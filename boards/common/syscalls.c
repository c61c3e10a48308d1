/*
 * Minimal newlib system calls for bare-metal boards, so printf and friends
 * link: stdout/stderr go to the UART, and the heap is deliberately absent
 * (_sbrk always fails), which keeps memory use fully static (ARCHITECTURE.md §4.2):
 * malloc returns NULL instead of growing into the stack.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "th_board.h"

void *_sbrk(ptrdiff_t incr);
int _write(int fd, const char *buf, int len);
int _read(int fd, char *buf, int len);
int _close(int fd);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
int _lseek(int fd, int off, int whence);
void _exit(int code);
int _kill(int pid, int sig);
int _getpid(void);

void *_sbrk(ptrdiff_t incr)
{
    (void)incr;
    errno = ENOMEM;
    return (void *)-1;
}

int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    th_uart_write((const uint8_t *)buf, (size_t)len);
    return len;
}

int _read(int fd, char *buf, int len)
{
    (void)fd;
    (void)buf;
    (void)len;
    errno = ENOSYS;
    return -1;
}

int _close(int fd)
{
    (void)fd;
    return -1;
}

int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd)
{
    return fd <= 2;
}

int _lseek(int fd, int off, int whence)
{
    (void)fd;
    (void)off;
    (void)whence;
    return 0;
}

void _exit(int code)
{
    th_exit(code);
}

int _kill(int pid, int sig)
{
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void)
{
    return 1;
}
