unsigned bit_command(unsigned word, int cmd, unsigned bit)
{
    unsigned mask = 1u << (bit & 31u);
    switch (cmd) {
    case 0:
        return word | mask;
    case 1:
        return word & ~mask;
    case 2:
        return word ^ mask;
    case 3:
        return (word & mask) != 0;
    }
    return word;
}
