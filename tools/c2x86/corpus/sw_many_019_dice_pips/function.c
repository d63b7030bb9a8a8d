unsigned pip_mask(int face)
{
    /* bit i is cell i of a 3x3 grid, row-major */
    unsigned m = 0;
    switch (face) {
    case 1:
        m = 1u << 4;
        break;
    case 2:
        m = (1u << 0) | (1u << 8);
        break;
    case 3:
        m = (1u << 0) | (1u << 4) | (1u << 8);
        break;
    case 4:
        m = (1u << 0) | (1u << 2) | (1u << 6) | (1u << 8);
        break;
    case 5:
        m = (1u << 0) | (1u << 2) | (1u << 4) | (1u << 6) | (1u << 8);
        break;
    case 6:
        m = (1u << 0) | (1u << 2) | (1u << 3) | (1u << 5) | (1u << 6) | (1u << 8);
        break;
    }
    return m;
}
