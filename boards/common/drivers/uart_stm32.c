/* STM32F4 USART (register layout of the F2/F4 families). */
#include "th_board_internal.h"

#ifndef TH_UART_BASE
#error "TH_UART_BASE must come from board.json"
#endif
#ifndef TH_UART_CLOCK_HZ
#define TH_UART_CLOCK_HZ 84000000u
#endif
#ifndef TH_UART_BAUD
#define TH_UART_BAUD 115200u
#endif

#define USART_SR TH_REG32(TH_UART_BASE + 0x00u)
#define USART_DR TH_REG32(TH_UART_BASE + 0x04u)
#define USART_BRR TH_REG32(TH_UART_BASE + 0x08u)
#define USART_CR1 TH_REG32(TH_UART_BASE + 0x0Cu)

#define SR_RXNE (1u << 5)
#define SR_TC (1u << 6)
#define SR_TXE (1u << 7)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define CR1_UE (1u << 13)

#define RCC_APB1ENR TH_REG32(0x40023840u)
#define RCC_APB2ENR TH_REG32(0x40023844u)

void th_uart_hw_init(void)
{
    /* Clock the peripheral (QEMU has no RCC model; hardware needs it).
     * Pin muxing is left to real-hardware boards' own init. */
    if (TH_UART_BASE == 0x40011000u) {
        RCC_APB2ENR |= 1u << 4; /* USART1 */
    } else if (TH_UART_BASE == 0x40004400u) {
        RCC_APB1ENR |= 1u << 17; /* USART2 */
    }
    USART_BRR = (TH_UART_CLOCK_HZ + TH_UART_BAUD / 2u) / TH_UART_BAUD;
    /* Bytes arriving before RE is set are dropped (QEMU and hardware):
     * the firmware must announce readiness after this returns. */
    USART_CR1 = CR1_UE | CR1_TE | CR1_RE;
}

void th_uart_hw_putc(uint8_t c)
{
    while ((USART_SR & SR_TXE) == 0u) {
    }
    USART_DR = c;
}

void th_uart_hw_drain(void)
{
    /* Bounded: an emulator that never sets the flag must not hang a fault report. */
    for (uint32_t spin = 0; spin < TH_UART_DRAIN_SPINS && ((USART_SR & SR_TC) == 0u); spin++) {
    }
}

int th_uart_hw_poll(uint8_t *out)
{
    if ((USART_SR & SR_RXNE) == 0u) {
        return 0;
    }
    *out = (uint8_t)USART_DR;
    return 1;
}
