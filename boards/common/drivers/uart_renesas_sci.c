/*
 * Renesas RA8 SCI (the "SCI_B" of the RA8M1 hardware manual, 32-bit registers) as an
 * asynchronous 8N1 UART, polled, for the ek-ra8m1 board under Renode.
 *
 * Registers used (offsets from the channel base): RDR 0x00 (received data, bits 0-8),
 * TDR 0x04 (transmit data), CCR0 0x08 (RE bit 0, TE bit 4, RIE bit 16), CCR2 0x10 (BRR bits
 * 8-15, CKS bits 20-21), CCR3 0x14 (CHR bits 8-9 = 2: 8 data bits, LSBF bit 12, MOD bits
 * 16-18 = 0: asynchronous), CSR 0x48 (TEND bit 30).
 *
 * Receive: Renode 1.15's model of this SCI (UART.RenesasRA8M1_SCI) does not implement the
 * status flag RDRF (it reads 0) and RDR reads 0 with a log warning when nothing waits, so
 * "a byte waits" is read from the interrupt controller instead: with RIE set, the SCI raises
 * its receive event (RXI) for every byte that arrives and again after a read that leaves
 * bytes queued; ICU IELSR0 (0x4000C300) links that event (board.json uart.rx_event) and
 * latches it in IELSR0.IR (bit 16, cleared by writing 0). Clearing IR before reading RDR
 * keeps "IR set" equal to "a byte waits": a byte arriving between the two raises it again.
 * The NVIC line IELSR0 drives is never enabled, so no interrupt is taken.
 *
 * Transmit: Renode sends a byte as TDR is written; CSR.TDRE is not modelled, CSR.TEND reads 1.
 * The driver waits for TEND before each byte (on silicon: the previous byte has left).
 *
 * Clocks, module-stop release and pin functions are not set up: the board runs on Renode.
 */
#include "th_board_internal.h"

#ifndef TH_UART_BASE
#error "TH_UART_BASE must come from board.json"
#endif
#ifndef TH_UART_CLOCK_HZ
#error "TH_UART_CLOCK_HZ (the SCI's peripheral clock) must come from board.json"
#endif
#ifndef TH_UART_BAUD
#define TH_UART_BAUD 115200u
#endif
#ifndef TH_UART_RX_EVENT
#error "TH_UART_RX_EVENT (the ICU event number of the SCI's RXI) must come from board.json"
#endif

#define SCI_RDR TH_REG32(TH_UART_BASE + 0x00u)
#define SCI_TDR TH_REG32(TH_UART_BASE + 0x04u)
#define SCI_CCR0 TH_REG32(TH_UART_BASE + 0x08u)
#define SCI_CCR2 TH_REG32(TH_UART_BASE + 0x10u)
#define SCI_CCR3 TH_REG32(TH_UART_BASE + 0x14u)
#define SCI_CSR TH_REG32(TH_UART_BASE + 0x48u)

#define CCR0_RE (1u << 0)
#define CCR0_TE (1u << 4)
#define CCR0_RIE (1u << 16)
#define CCR3_CHR_8BIT (2u << 8)
#define CCR3_LSBF (1u << 12)
#define CSR_TEND (1u << 30)

#define ICU_IELSR0 TH_REG32(0x4000C300u)
#define IELSR_IR (1u << 16)

/* BRR for CKS = 0 and 16 base clocks per bit (BGDM = ABCS = 0): PCLK / (32 * baud) - 1. */
#define SCI_BRR (((TH_UART_CLOCK_HZ + 16u * TH_UART_BAUD) / (32u * TH_UART_BAUD)) - 1u)
#if SCI_BRR > 255u
#error "SCI: clock/baud out of the BRR range for CKS = 0"
#endif

void th_uart_hw_init(void)
{
    SCI_CCR0 = 0u; /* the rate and format are written while RE = TE = 0 */
    SCI_CCR2 = (uint32_t)SCI_BRR << 8;
    SCI_CCR3 = CCR3_CHR_8BIT | CCR3_LSBF;
    ICU_IELSR0 = (uint32_t)TH_UART_RX_EVENT; /* links RXI, IR = 0 */
    /* Bytes arriving before RE is set are dropped: the firmware announces readiness after. */
    SCI_CCR0 = CCR0_RE | CCR0_TE | CCR0_RIE;
}

void th_uart_hw_putc(uint8_t c)
{
    while ((SCI_CSR & CSR_TEND) == 0u) {
    }
    SCI_TDR = c;
}

void th_uart_hw_drain(void)
{
    /* Bounded: an emulator that never sets the flag must not hang a fault report. */
    for (uint32_t spin = 0; spin < TH_UART_DRAIN_SPINS && ((SCI_CSR & CSR_TEND) == 0u); spin++) {
    }
}

int th_uart_hw_poll(uint8_t *out)
{
    if ((ICU_IELSR0 & IELSR_IR) == 0u) {
        return 0;
    }
    ICU_IELSR0 = (uint32_t)TH_UART_RX_EVENT; /* IR = 0 before the read (see above) */
    *out = (uint8_t)(SCI_RDR & 0xFFu);
    return 1;
}
