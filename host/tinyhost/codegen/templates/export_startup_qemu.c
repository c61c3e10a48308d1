/* Bare-metal start-up for running the example on QEMU without any board support package:
 * a two-entry vector table, .data/.bss set-up, newlib's semihosting I/O (rdimon), exit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __stack_top__, __data_start__, __data_end__, __data_load__, __bss_start__,
    __bss_end__;
extern void initialise_monitor_handles(void);
extern int main(void);

void reset_handler(void);

__attribute__((section(".vectors"), used)) static const uintptr_t vectors[2] = {
    (uintptr_t)&__stack_top__, (uintptr_t)&reset_handler};

void reset_handler(void)
{
    memcpy(&__data_start__, &__data_load__,
           (size_t)((uintptr_t)&__data_end__ - (uintptr_t)&__data_start__));
    memset(&__bss_start__, 0, (size_t)((uintptr_t)&__bss_end__ - (uintptr_t)&__bss_start__));
    initialise_monitor_handles();
    exit(main());
}
