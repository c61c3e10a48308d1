/* CMSDK APB UART (MPS2 / MPS3 FPGA images). */
#include "th_board_internal.h"

#ifndef TH_UART_BASE
#error "TH_UART_BASE must come from board.json"
#endif
#ifndef TH_UART_CLOCK_HZ
#define TH_UART_CLOCK_HZ 25000000u
#endif
#ifndef TH_UART_BAUD
#define TH_UART_BAUD 115200u
#endif

#define UART_DATA TH_REG32(TH_UART_BASE + 0x00u)
#define UART_STATE TH_REG32(TH_UART_BASE + 0x04u)
#define UART_CTRL TH_REG32(TH_UART_BASE + 0x08u)
#define UART_BAUDDIV TH_REG32(TH_UART_BASE + 0x10u)

#define STATE_TX_FULL 0x1u
#define STATE_RX_FULL 0x2u
#define CTRL_TX_EN 0x1u
#define CTRL_RX_EN 0x2u

void th_uart_hw_init(void)
{
    /* The divider must be >= 16; QEMU ignores it, hardware needs it. */
    UART_BAUDDIV = TH_UART_CLOCK_HZ / TH_UART_BAUD;
    UART_CTRL = CTRL_TX_EN | CTRL_RX_EN;
    /* Measured on QEMU: without one read of DATA after enabling RX the
     * first bytes from the host arrive about a second late. */
    (void)UART_DATA;
}

void th_uart_hw_putc(uint8_t c)
{
    while ((UART_STATE & STATE_TX_FULL) != 0u) {
    }
    UART_DATA = c;
}

/* The CMSDK UART shows only its one-byte buffer: drained when it is empty. */
void th_uart_hw_drain(void)
{
    /* Bounded: an emulator that never sets the flag must not hang a fault report. */
    for (uint32_t spin = 0; spin < TH_UART_DRAIN_SPINS && ((UART_STATE & STATE_TX_FULL) != 0u); spin++) {
    }
}

int th_uart_hw_poll(uint8_t *out)
{
    if ((UART_STATE & STATE_RX_FULL) == 0u) {
        return 0;
    }
    *out = (uint8_t)UART_DATA;
    return 1;
}
