/*
 * STM32 USART with the ISR/RDR/TDR register layout (STM32F7 RM0385 §31.8, STM32L4+ RM0432
 * §50.8), and with TH_UART_LPUART=1 the low-power UART of the same family (RM0432 §51.7).
 * Peripheral clock enable and pin muxing belong to the board (boards/<name>/board_hw.c).
 */
#include "th_board_internal.h"

#ifndef TH_UART_BASE
#error "TH_UART_BASE must come from board.json"
#endif
#ifndef TH_UART_CLOCK_HZ
#error "TH_UART_CLOCK_HZ (the UART kernel clock) must come from board.json"
#endif
#ifndef TH_UART_BAUD
#define TH_UART_BAUD 115200u
#endif
#ifndef TH_UART_LPUART
#define TH_UART_LPUART 0
#endif

#define USART_CR1 TH_REG32(TH_UART_BASE + 0x00u)
#define USART_BRR TH_REG32(TH_UART_BASE + 0x0Cu)
#define USART_ISR TH_REG32(TH_UART_BASE + 0x1Cu)
#define USART_ICR TH_REG32(TH_UART_BASE + 0x20u)
#define USART_RDR TH_REG32(TH_UART_BASE + 0x24u)
#define USART_TDR TH_REG32(TH_UART_BASE + 0x28u)

#define CR1_UE (1u << 0)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define ISR_ORE (1u << 3)
#define ISR_RXNE (1u << 5)
#define ISR_TC (1u << 6)
#define ISR_TXE (1u << 7)
#define ICR_ORECF (1u << 3)

#if TH_UART_LPUART
/* LPUART: BRR = 256 * fck / baud, valid from 0x300 to 2^20 - 1 (RM0432 §51.4.7). */
#define UART_BRR_VALUE \
    ((uint32_t)((256ull * TH_UART_CLOCK_HZ + TH_UART_BAUD / 2u) / TH_UART_BAUD))
#if (256ull * TH_UART_CLOCK_HZ / TH_UART_BAUD) < 0x300u || \
    (256ull * TH_UART_CLOCK_HZ / TH_UART_BAUD) > 0xFFFFFu
#error "LPUART: clock/baud out of the BRR range"
#endif
#else
/* USART, 16x oversampling (OVER8 = 0): BRR = fck / baud (RM0385 §31.5.4). */
#define UART_BRR_VALUE ((TH_UART_CLOCK_HZ + TH_UART_BAUD / 2u) / TH_UART_BAUD)
#endif

void th_uart_hw_init(void)
{
    USART_CR1 = 0u; /* BRR is writable only while UE = 0 */
    USART_BRR = UART_BRR_VALUE;
    /* Bytes arriving before RE is set are dropped: the firmware announces readiness after. */
    USART_CR1 = CR1_UE | CR1_TE | CR1_RE;
}

void th_uart_hw_putc(uint8_t c)
{
    while ((USART_ISR & ISR_TXE) == 0u) {
    }
    USART_TDR = c;
}

void th_uart_hw_drain(void)
{
    /* Bounded: an emulator that never sets the flag must not hang a fault report. */
    for (uint32_t spin = 0; spin < TH_UART_DRAIN_SPINS && ((USART_ISR & ISR_TC) == 0u); spin++) {
    }
}

int th_uart_hw_poll(uint8_t *out)
{
    uint32_t isr = USART_ISR;
    if ((isr & ISR_ORE) != 0u) {
        /* An overrun stops further reception until cleared; the protocol layer resyncs. */
        USART_ICR = ICR_ORECF;
    }
    if ((isr & ISR_RXNE) == 0u) {
        return 0;
    }
    *out = (uint8_t)USART_RDR;
    return 1;
}
