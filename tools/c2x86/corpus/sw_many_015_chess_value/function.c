int material_balance(const char *pieces)
{
    int balance = 0;
    for (; *pieces; pieces++) {
        char c = *pieces;
        int sign = 1;
        if (c >= 'a' && c <= 'z') {
            sign = -1;
            c = (char)(c - 'a' + 'A');
        }
        int v;
        switch (c) {
        case 'P': v = 100; break;
        case 'N': v = 320; break;
        case 'B': v = 330; break;
        case 'R': v = 500; break;
        case 'Q': v = 900; break;
        case 'K': v = 0; break;
        default: v = 0; break;
        }
        balance += sign * v;
    }
    return balance;
}
