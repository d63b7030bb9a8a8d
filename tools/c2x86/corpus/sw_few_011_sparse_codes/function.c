int sparse_code_weight(unsigned code)
{
    switch (code) {
    case 0x10u:
        return 1;
    case 0x1000u:
        return 20;
    case 0x100000u:
        return 300;
    case 0xFFFFFFFFu:
        return -1;
    default:
        return 0;
    }
}
