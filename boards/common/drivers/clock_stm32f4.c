/*
 * STM32F4 clock tree: SYSCLK = PLL (from HSE, or HSI when the board has no crystal or the HSE
 * does not start), AHB = SYSCLK, APB1 = SYSCLK/4, APB2 = SYSCLK/2, flash wait states for
 * 2.7-3.6 V. References: RM0090 (F405/407) §3.5.1, §5.4, §7.3; RM0390 (F446) §3.4.1, §5.1.4,
 * §5.4, §6.3. clock_stm32f7.c builds this file with TH_CLOCK_STM32F7=1 (RM0385: same RCC/PWR
 * layout, ART instead of the F4 caches, 30 MHz per wait state up to 7 WS at 216 MHz).
 *
 * From board.json "clock" (boards/common/stm32_board.cmake): TH_CLOCK_SYSCLK_HZ (= clock_hz),
 * TH_CLOCK_HSE_HZ (0 = HSI), TH_CLOCK_OVERDRIVE (1 above 168 MHz on F446 / 180 MHz on F7).
 * Under Renode the RCC/PWR models echo the ready bits, so this runs there unchanged.
 */
#include <stdint.h>

#include "stm32_gpio.h"
#include "th_board_internal.h"

#ifndef TH_CLOCK_SYSCLK_HZ
#error "TH_CLOCK_SYSCLK_HZ must come from board.json clock_hz"
#endif
#ifndef TH_CLOCK_HSE_HZ
#define TH_CLOCK_HSE_HZ 0
#endif
#ifndef TH_CLOCK_OVERDRIVE
#define TH_CLOCK_OVERDRIVE 0
#endif
#ifndef TH_CLOCK_STM32F7
#define TH_CLOCK_STM32F7 0
#endif

#if TH_CLOCK_STM32F7
#if TH_CLOCK_SYSCLK_HZ > 216000000
#error "STM32F7: SYSCLK above 216 MHz"
#endif
#else
#if TH_CLOCK_SYSCLK_HZ > 180000000 || (!TH_CLOCK_OVERDRIVE && TH_CLOCK_SYSCLK_HZ > 168000000)
#error "STM32F4: SYSCLK above 168 MHz needs over-drive (F446), never above 180 MHz"
#endif
#endif

#define HSI_HZ 16000000u

/* RCC (RM0090 §7.3, RM0390 §6.3, RM0385 §5.3): base 0x40023800. */
#define RCC_BASE 0x40023800u
#define RCC_CR TH_REG32(RCC_BASE + 0x00u)
#define RCC_PLLCFGR TH_REG32(RCC_BASE + 0x04u)
#define RCC_CFGR TH_REG32(RCC_BASE + 0x08u)
#define RCC_APB1ENR TH_REG32(RCC_BASE + 0x40u)
#define RCC_CR_HSION (1u << 0)
#define RCC_CR_HSIRDY (1u << 1)
#define RCC_CR_HSEON (1u << 16)
#define RCC_CR_HSERDY (1u << 17)
#define RCC_CR_PLLON (1u << 24)
#define RCC_CR_PLLRDY (1u << 25)
#define RCC_PLLCFGR_M_POS 0u /* PLLM[5:0]: 2..63, VCO input 1..2 MHz */
#define RCC_PLLCFGR_N_POS 6u /* PLLN[14:6]: 50..432, VCO output 100..432 MHz */
#define RCC_PLLCFGR_P_POS 16u /* PLLP[17:16]: 0 = /2 */
#define RCC_PLLCFGR_SRC_HSE (1u << 22)
#define RCC_PLLCFGR_Q_POS 24u /* PLLQ[27:24]: 2..15, 48 MHz domain */
#define RCC_PLLCFGR_MANAGED \
    ((0x3Fu << RCC_PLLCFGR_M_POS) | (0x1FFu << RCC_PLLCFGR_N_POS) | \
     (0x3u << RCC_PLLCFGR_P_POS) | RCC_PLLCFGR_SRC_HSE | (0xFu << RCC_PLLCFGR_Q_POS))
#define RCC_CFGR_SW_MASK 0x3u
#define RCC_CFGR_SW_PLL 0x2u
#define RCC_CFGR_SWS_MASK (0x3u << 2)
#define RCC_CFGR_SWS_PLL (0x2u << 2)
#define RCC_CFGR_HPRE_MASK (0xFu << 4) /* 0xxx = /1 */
#define RCC_CFGR_PPRE1_POS 10u
#define RCC_CFGR_PPRE2_POS 13u
#define RCC_CFGR_PPRE_DIV2 0x4u
#define RCC_CFGR_PPRE_DIV4 0x5u
#define RCC_APB1ENR_PWREN (1u << 28)

/* PWR (RM0090 §5.4, RM0390 §5.4, RM0385 §4.4): base 0x40007000. */
#define PWR_BASE 0x40007000u
#define PWR_CR TH_REG32(PWR_BASE + 0x00u)
#define PWR_CSR TH_REG32(PWR_BASE + 0x04u)
#if TH_CLOCK_OVERDRIVE
#define PWR_CR_VOS_SCALE1 (0x3u << 14) /* VOS[15:14] = 11 (F446, F7) */
#else
#define PWR_CR_VOS_SCALE1 (0x1u << 14) /* VOS (bit 14) = 1 (F405/407; bit 15 reserved) */
#endif
#define PWR_CR_ODEN (1u << 16)
#define PWR_CR_ODSWEN (1u << 17)
#define PWR_CSR_ODRDY (1u << 16)
#define PWR_CSR_ODSWRDY (1u << 17)

/* FLASH_ACR (RM0090 §3.9.1, RM0390 §3.8.1, RM0385 §3.7.1): base 0x40023C00. */
#define FLASH_ACR TH_REG32(0x40023C00u)
#define FLASH_ACR_LATENCY_MASK 0xFu
#define FLASH_ACR_PRFTEN (1u << 8)
#if TH_CLOCK_STM32F7
#define FLASH_ACR_ARTEN (1u << 9)
#define FLASH_ACR_ACCEL (FLASH_ACR_PRFTEN | FLASH_ACR_ARTEN)
#else
#define FLASH_ACR_ICEN (1u << 9)
#define FLASH_ACR_DCEN (1u << 10)
#define FLASH_ACR_ACCEL (FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN)
#endif
/* Wait states at 2.7-3.6 V: one per 30 MHz of HCLK (RM0090 Table 10, RM0390 Table 5,
 * RM0385 Table 7). */
#define FLASH_WS ((TH_CLOCK_SYSCLK_HZ - 1u) / 30000000u)

#define REGP(r) (&(r))

static uint32_t pllcfgr_for(uint32_t old, uint32_t src_hz, int hse)
{
    /* 2 MHz VCO input when the source allows it (less jitter), else 1 MHz (25 MHz HSE). */
    uint32_t vco_in = (src_hz % 2000000u == 0u) ? 2000000u : 1000000u;
    uint32_t m = src_hz / vco_in;
    uint32_t n = 2u * (uint32_t)TH_CLOCK_SYSCLK_HZ / vco_in; /* P = 2 */
    uint32_t vco = vco_in * n;
    uint32_t q = (vco + 48000000u - 1u) / 48000000u; /* keep the 48 MHz domain <= 48 MHz */
    if (q < 2u) {
        q = 2u;
    }
    uint32_t v = old & ~RCC_PLLCFGR_MANAGED;
    v |= m << RCC_PLLCFGR_M_POS;
    v |= n << RCC_PLLCFGR_N_POS;
    v |= 0u << RCC_PLLCFGR_P_POS;
    v |= q << RCC_PLLCFGR_Q_POS;
    if (hse) {
        v |= RCC_PLLCFGR_SRC_HSE;
    }
    return v;
}

static void clock_pll_setup(void)
{
    /* Run from HSI while reconfiguring (it is the reset source). */
    RCC_CR |= RCC_CR_HSION;
    (void)th_stm32_wait(REGP(RCC_CR), RCC_CR_HSIRDY, RCC_CR_HSIRDY);

    int hse = 0;
    uint32_t src_hz = HSI_HZ;
#if TH_CLOCK_HSE_HZ
    RCC_CR |= RCC_CR_HSEON;
    if (th_stm32_wait(REGP(RCC_CR), RCC_CR_HSERDY, RCC_CR_HSERDY)) {
        hse = 1;
        src_hz = TH_CLOCK_HSE_HZ;
    } else {
        RCC_CR &= ~RCC_CR_HSEON; /* no crystal: the same SYSCLK from HSI */
    }
#endif

    /* Voltage scale 1 (needed above 144/168 MHz); VOS can change only while the PLL is off. */
    RCC_APB1ENR |= RCC_APB1ENR_PWREN;
    (void)RCC_APB1ENR; /* read back: the clock enable takes effect before PWR is touched */
    RCC_CR &= ~RCC_CR_PLLON;
    (void)th_stm32_wait(REGP(RCC_CR), RCC_CR_PLLRDY, 0u);
    PWR_CR |= PWR_CR_VOS_SCALE1;

    RCC_PLLCFGR = pllcfgr_for(RCC_PLLCFGR, src_hz, hse);
    RCC_CR |= RCC_CR_PLLON;

#if TH_CLOCK_OVERDRIVE
    /* Over-drive while the PLL locks, before switching to it (RM0390 §5.1.4, RM0385 §4.1.4). */
    PWR_CR |= PWR_CR_ODEN;
    (void)th_stm32_wait(REGP(PWR_CSR), PWR_CSR_ODRDY, PWR_CSR_ODRDY);
    PWR_CR |= PWR_CR_ODSWEN;
    (void)th_stm32_wait(REGP(PWR_CSR), PWR_CSR_ODSWRDY, PWR_CSR_ODSWRDY);
#endif

    /* Wait states before the clock goes up; read back to be sure they took (RM0090 §3.5.1). */
    FLASH_ACR = (FLASH_ACR & ~FLASH_ACR_LATENCY_MASK) | FLASH_WS;
    if ((FLASH_ACR & FLASH_ACR_LATENCY_MASK) != FLASH_WS) {
        return; /* stay on HSI rather than run flash too fast */
    }
    FLASH_ACR |= FLASH_ACR_ACCEL;

    uint32_t cfgr = RCC_CFGR;
    cfgr &= ~(RCC_CFGR_HPRE_MASK | (0x7u << RCC_CFGR_PPRE1_POS) | (0x7u << RCC_CFGR_PPRE2_POS));
    cfgr |= (RCC_CFGR_PPRE_DIV4 << RCC_CFGR_PPRE1_POS) | (RCC_CFGR_PPRE_DIV2 << RCC_CFGR_PPRE2_POS);
    RCC_CFGR = cfgr;

    if (!th_stm32_wait(REGP(RCC_CR), RCC_CR_PLLRDY, RCC_CR_PLLRDY)) {
        return; /* PLL did not lock: keep HSI */
    }
    RCC_CFGR = (RCC_CFGR & ~RCC_CFGR_SW_MASK) | RCC_CFGR_SW_PLL;
    (void)th_stm32_wait(REGP(RCC_CFGR), RCC_CFGR_SWS_MASK, RCC_CFGR_SWS_PLL);
}

#if !TH_CLOCK_STM32F7
void th_clock_hw_init(void)
{
    clock_pll_setup();
}
#endif
