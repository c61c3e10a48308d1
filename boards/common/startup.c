/*
 * Cortex-M startup shared by all M-profile boards: vector table, reset
 * (FPU/MVE enable, .data copy, .bss zero, main, exit) and fault handlers
 * that report over semihosting + UART and exit non-zero, so a crashing
 * test ends QEMU instead of hanging it.
 */
#include <stdint.h>
#include <string.h>

#include "th_board.h"
#include "th_board_internal.h"

#ifndef TH_NUM_IRQS
#define TH_NUM_IRQS 32
#endif

/* After a fault is reported: boards without a semihosting host (real hardware, Renode) reset,
 * so a device in the field comes back; under QEMU the program ends with TH_EXIT_HARDFAULT, the
 * exit code tests look for. -DTH_FAULT_RESET=1 (CMake) makes a QEMU build reset too. */
#ifndef TH_FAULT_RESET
#if defined(TH_SEMIHOSTING) && !TH_SEMIHOSTING
#define TH_FAULT_RESET 1
#else
#define TH_FAULT_RESET 0
#endif
#endif

/* Linker-script symbols (boards/common/th_sections.ld). */
extern uint32_t __data_load__;
extern uint32_t __data_start__;
extern uint32_t __data_end__;
extern uint32_t __bss_start__;
extern uint32_t __bss_end__;
extern uint32_t __stack_top__;

int main(void);
void Reset_Handler(void);
void HardFault_Handler(void);
void Default_Handler(void);
void th_startup_c(void) __attribute__((noreturn, used));
void th_fault_report(const uint32_t *frame, uint32_t exc_return) __attribute__((noreturn, used));

/* Entry 0 is the initial SP, entry 1 the reset vector; 2..15 are the
 * system exceptions, then the board's external IRQs. */
__attribute__((section(".vectors"), used)) const uintptr_t th_vectors[16 + TH_NUM_IRQS] = {
    [0] = (uintptr_t)&__stack_top__,
    [1] = (uintptr_t)Reset_Handler,
    [2] = (uintptr_t)Default_Handler,  /* NMI */
    [3] = (uintptr_t)HardFault_Handler,
    [4] = (uintptr_t)HardFault_Handler, /* MemManage */
    [5] = (uintptr_t)HardFault_Handler, /* BusFault */
    [6] = (uintptr_t)HardFault_Handler, /* UsageFault */
    [7] = (uintptr_t)HardFault_Handler, /* SecureFault (v8-M) */
    [11] = (uintptr_t)Default_Handler,  /* SVCall */
    [12] = (uintptr_t)Default_Handler,  /* DebugMonitor */
    [14] = (uintptr_t)Default_Handler,  /* PendSV */
    [15] = (uintptr_t)Default_Handler,  /* SysTick */
    [16 ... 16 + TH_NUM_IRQS - 1] = (uintptr_t)Default_Handler,
};

/* Naked so that no compiler-generated code (which could use FP or MVE
 * registers, e.g. a vectorized copy) runs before CPACR grants access. */
__attribute__((naked, noreturn)) void Reset_Handler(void)
{
    __asm__ volatile(
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
        /* CPACR (0xE000ED88): full access to CP10/CP11 = FPU (and MVE). */
        "movw r0, #0xED88\n"
        "movt r0, #0xE000\n"
        "ldr r1, [r0]\n"
        "orr r1, r1, #(0xF << 20)\n"
        "str r1, [r0]\n"
        "dsb\n"
        "isb\n"
#endif
        "b th_startup_c\n");
}

void th_startup_c(void)
{
    size_t data_len = (size_t)((uintptr_t)&__data_end__ - (uintptr_t)&__data_start__);
    size_t bss_len = (size_t)((uintptr_t)&__bss_end__ - (uintptr_t)&__bss_start__);
    memcpy(&__data_start__, &__data_load__, data_len);
    memset(&__bss_start__, 0, bss_len);
    th_exit(main());
}

/* Pass the stacked exception frame (r0-r3, r12, lr, pc, xpsr) to C. */
__attribute__((naked)) void HardFault_Handler(void)
{
    __asm__ volatile(
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "mov r1, lr\n"
        "b th_fault_report\n");
}

__attribute__((weak)) void th_fault_hook(const th_fault_info *info)
{
    (void)info;
}

void th_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    th_fault_info info;
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    info.exception = ipsr & 0x1FFu;
    info.pc = frame[6];
    info.lr = frame[5];
    info.xpsr = frame[7];
    info.cfsr = TH_REG32(0xE000ED28);
    info.hfsr = TH_REG32(0xE000ED2C);
    info.mmfar = TH_REG32(0xE000ED34);
    info.bfar = TH_REG32(0xE000ED38);
    th_fault_hook(&info);
    th_report("\n*** HardFault ***\n");
    th_report_hex("pc", frame[6]);
    th_report_hex("lr", frame[5]);
    th_report_hex("xpsr", frame[7]);
    th_report_hex("exc_return", exc_return);
    th_report_hex("cfsr", TH_REG32(0xE000ED28));
    th_report_hex("hfsr", TH_REG32(0xE000ED2C));
    th_report_hex("mmfar", TH_REG32(0xE000ED34));
    th_report_hex("bfar", TH_REG32(0xE000ED38));
#if TH_FAULT_RESET
    th_uart_hw_drain(); /* the report must leave before the reset cuts it off */
    __asm__ volatile("dsb" ::: "memory");
    TH_REG32(0xE000ED0C) = (0x5FAu << 16) | (1u << 2); /* AIRCR: VECTKEY, SYSRESETREQ */
    __asm__ volatile("dsb" ::: "memory");
    for (;;) {
    }
#else
    th_exit(TH_EXIT_HARDFAULT);
#endif
}

void Default_Handler(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    th_report("\n*** unhandled exception ***\n");
    th_report_hex("ipsr", ipsr);
    th_exit(TH_EXIT_UNHANDLED_IRQ);
}
