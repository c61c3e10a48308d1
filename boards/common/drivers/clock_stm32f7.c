/*
 * STM32F7 clock tree (RM0385 §5): the F4 PLL sequence with over-drive (clock_stm32f4.c built
 * with TH_CLOCK_STM32F7=1), then the Cortex-M7 L1 caches (ARMv7-M ARM B2.2.7, Cortex-M7 TRM
 * §4.1): invalidate, then enable. Code runs from flash over AXIM, where the L1 I-cache, not
 * the ART (ITCM path only), hides the 7 wait states.
 */
#define TH_CLOCK_STM32F7 1
#include "clock_stm32f4.c"

#define SCB_CCR TH_REG32(0xE000ED14u)
#define SCB_CCR_DC (1u << 16)
#define SCB_CCR_IC (1u << 17)
#define SCB_CCSIDR TH_REG32(0xE000ED80u)
#define SCB_CSSELR TH_REG32(0xE000ED84u)
#define SCB_ICIALLU TH_REG32(0xE000EF50u)
#define SCB_DCISW TH_REG32(0xE000EF60u)

static void cm7_caches_enable(void)
{
    __asm__ volatile("dsb\n isb" ::: "memory");
    SCB_ICIALLU = 0u;
    __asm__ volatile("dsb\n isb" ::: "memory");
    SCB_CCR |= SCB_CCR_IC;
    __asm__ volatile("dsb\n isb" ::: "memory");

    /* D-cache: invalidate every line by set/way (CCSIDR of the L1 data cache), then enable. */
    SCB_CSSELR = 0u;
    __asm__ volatile("dsb" ::: "memory");
    uint32_t ccsidr = SCB_CCSIDR;
    uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1u;
    uint32_t ways = ((ccsidr >> 3) & 0x3FFu) + 1u;
    uint32_t line_shift = (ccsidr & 0x7u) + 4u;
    uint32_t way_shift = ways > 1u ? (uint32_t)__builtin_clz(ways - 1u) : 0u;
    for (uint32_t s = 0; s < sets; s++) {
        for (uint32_t w = 0; w < ways; w++) {
            SCB_DCISW = (s << line_shift) | (ways > 1u ? (w << way_shift) : 0u);
        }
    }
    __asm__ volatile("dsb" ::: "memory");
    SCB_CCR |= SCB_CCR_DC;
    __asm__ volatile("dsb\n isb" ::: "memory");
}

void th_clock_hw_init(void)
{
    clock_pll_setup();
    cm7_caches_enable();
}
