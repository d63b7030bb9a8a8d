int program_length(const unsigned char *code, int n, int *count)
{
    int pc = 0;
    int instructions = 0;
    while (pc < n) {
        int size;
        switch (code[pc]) {
        case 0x00: size = 1; break; /* nop */
        case 0x01: size = 2; break; /* load imm8 */
        case 0x02: size = 3; break; /* load imm16 */
        case 0x03: size = 5; break; /* load imm32 */
        case 0x04: size = 1; break; /* add */
        case 0x05: size = 2; break; /* jump rel8 */
        case 0x06: size = 3; break; /* call abs16 */
        case 0x07: size = 1; break; /* ret */
        default:
            *count = instructions;
            return -pc - 1;
        }
        pc += size;
        instructions++;
    }
    *count = instructions;
    return pc;
}
