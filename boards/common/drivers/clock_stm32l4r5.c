/*
 * STM32L4R5/L4S5 (L4+) clock tree, RM0432: SYSCLK = 120 MHz from PLLR with HSI16 as source
 * (the NUCLEO-L4R5ZI has no HSE crystal fitted), AHB = APB1 = APB2 = 120 MHz, voltage range 1
 * boost mode, 5 flash wait states.
 *
 * Range 1 boost sequence (RM0432 §5.1.8 "Dynamic voltage scaling management"): with AHB = SYSCLK/2,
 * clear PWR_CR5.R1MODE, raise the flash latency, switch to the PLL, wait >= 1 us, then AHB /1.
 */
#include <stdint.h>

#include "stm32_gpio.h"
#include "th_board_internal.h"

#ifndef TH_CLOCK_SYSCLK_HZ
#error "TH_CLOCK_SYSCLK_HZ must come from board.json clock_hz"
#endif
#if TH_CLOCK_SYSCLK_HZ != 120000000
#error "clock_stm32l4r5.c configures exactly 120 MHz (HSI16 / 2 * 30 / 2)"
#endif

/* RCC (RM0432 §6.4): base 0x40021000. */
#define RCC_BASE 0x40021000u
#define RCC_CR TH_REG32(RCC_BASE + 0x00u)
#define RCC_CFGR TH_REG32(RCC_BASE + 0x08u)
#define RCC_PLLCFGR TH_REG32(RCC_BASE + 0x0Cu)
#define RCC_APB1ENR1 TH_REG32(RCC_BASE + 0x58u)
#define RCC_CR_HSION (1u << 8)
#define RCC_CR_HSIRDY (1u << 10)
#define RCC_CR_PLLON (1u << 24)
#define RCC_CR_PLLRDY (1u << 25)
#define RCC_CFGR_SW_MASK 0x3u
#define RCC_CFGR_SW_PLL 0x3u
#define RCC_CFGR_SWS_MASK (0x3u << 2)
#define RCC_CFGR_SWS_PLL (0x3u << 2)
#define RCC_CFGR_HPRE_MASK (0xFu << 4)
#define RCC_CFGR_HPRE_DIV2 (0x8u << 4)
#define RCC_CFGR_PPRE1_MASK (0x7u << 8) /* 0xx = /1 */
#define RCC_CFGR_PPRE2_MASK (0x7u << 11)
#define RCC_PLLCFGR_SRC_HSI16 0x2u      /* PLLSRC[1:0] = 10 */
#define RCC_PLLCFGR_M_POS 4u            /* PLLM[7:4]: M = PLLM + 1; VCO input 2.66..16 MHz */
#define RCC_PLLCFGR_N_POS 8u            /* PLLN[14:8]: 8..127; VCO output 64..344 MHz */
#define RCC_PLLCFGR_REN (1u << 24)
#define RCC_PLLCFGR_R_POS 25u           /* PLLR[26:25]: 00 = /2 */
#define RCC_APB1ENR1_PWREN (1u << 28)

#define PLL_M 2u  /* 16 MHz / 2 = 8 MHz VCO input */
#define PLL_N 30u /* 240 MHz VCO */
#define PLL_R_DIV2 0u

/* PWR (RM0432 §5.4): base 0x40007000. */
#define PWR_BASE 0x40007000u
#define PWR_CR1 TH_REG32(PWR_BASE + 0x00u)
#define PWR_SR2 TH_REG32(PWR_BASE + 0x14u)
#define PWR_CR5 TH_REG32(PWR_BASE + 0x80u)
#define PWR_CR1_VOS_MASK (0x3u << 9)
#define PWR_CR1_VOS_RANGE1 (0x1u << 9)
#define PWR_SR2_VOSF (1u << 10)
#define PWR_CR5_R1MODE (1u << 8) /* 1 = range 1 normal, 0 = range 1 boost */

/* FLASH_ACR (RM0432 §3.7.1): base 0x40022000; range 1 boost: 5 WS up to 120 MHz (Table 9). */
#define FLASH_ACR TH_REG32(0x40022000u)
#define FLASH_ACR_LATENCY_MASK 0xFu
#define FLASH_ACR_LATENCY_5WS 5u
#define FLASH_ACR_PRFTEN (1u << 8)
#define FLASH_ACR_ICEN (1u << 9)
#define FLASH_ACR_DCEN (1u << 10)

#define REGP(r) (&(r))

void th_clock_hw_init(void)
{
    RCC_APB1ENR1 |= RCC_APB1ENR1_PWREN;
    (void)RCC_APB1ENR1; /* the clock enable takes effect before PWR is touched */

    /* Range 1 is the reset value; make sure, and wait for the regulator to settle. */
    PWR_CR1 = (PWR_CR1 & ~PWR_CR1_VOS_MASK) | PWR_CR1_VOS_RANGE1;
    (void)th_stm32_wait(REGP(PWR_SR2), PWR_SR2_VOSF, 0u);

    RCC_CR |= RCC_CR_HSION;
    if (!th_stm32_wait(REGP(RCC_CR), RCC_CR_HSIRDY, RCC_CR_HSIRDY)) {
        return; /* stay on MSI 4 MHz */
    }

    /* Boost: AHB /2 first, then R1MODE = 0, then the wait states for 120 MHz. */
    RCC_CFGR = (RCC_CFGR & ~RCC_CFGR_HPRE_MASK) | RCC_CFGR_HPRE_DIV2;
    PWR_CR5 &= ~PWR_CR5_R1MODE;
    FLASH_ACR = (FLASH_ACR & ~FLASH_ACR_LATENCY_MASK) | FLASH_ACR_LATENCY_5WS;
    if ((FLASH_ACR & FLASH_ACR_LATENCY_MASK) != FLASH_ACR_LATENCY_5WS) {
        return;
    }
    FLASH_ACR |= FLASH_ACR_PRFTEN | FLASH_ACR_ICEN | FLASH_ACR_DCEN;

    /* PLLCFGR may be written only while the PLL is off. */
    RCC_CR &= ~RCC_CR_PLLON;
    (void)th_stm32_wait(REGP(RCC_CR), RCC_CR_PLLRDY, 0u);
    RCC_PLLCFGR = RCC_PLLCFGR_SRC_HSI16 | ((PLL_M - 1u) << RCC_PLLCFGR_M_POS) |
                  (PLL_N << RCC_PLLCFGR_N_POS) | (PLL_R_DIV2 << RCC_PLLCFGR_R_POS) |
                  RCC_PLLCFGR_REN;
    RCC_CR |= RCC_CR_PLLON;
    if (!th_stm32_wait(REGP(RCC_CR), RCC_CR_PLLRDY, RCC_CR_PLLRDY)) {
        return;
    }

    RCC_CFGR &= ~(RCC_CFGR_PPRE1_MASK | RCC_CFGR_PPRE2_MASK);
    RCC_CFGR = (RCC_CFGR & ~RCC_CFGR_SW_MASK) | RCC_CFGR_SW_PLL;
    (void)th_stm32_wait(REGP(RCC_CFGR), RCC_CFGR_SWS_MASK, RCC_CFGR_SWS_PLL);

    /* >= 1 us at HCLK = 60 MHz before AHB /1: 120 loop iterations are well over 60 cycles. */
    for (volatile uint32_t i = 0; i < 120u; i++) {
    }
    RCC_CFGR &= ~RCC_CFGR_HPRE_MASK;
}
