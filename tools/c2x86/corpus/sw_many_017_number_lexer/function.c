int classify_number(const char *s)
{
    int state = 0;
    for (; *s; s++) {
        char c = *s;
        int digit = c >= '0' && c <= '9';
        switch (state) {
        case 0: /* start */
            if (c == '+' || c == '-') state = 1;
            else if (digit) state = 2;
            else if (c == '.') state = 3;
            else return 0;
            break;
        case 1: /* after sign */
            if (digit) state = 2;
            else if (c == '.') state = 3;
            else return 0;
            break;
        case 2: /* integer digits */
            if (digit) state = 2;
            else if (c == '.') state = 4;
            else if (c == 'e' || c == 'E') state = 5;
            else return 0;
            break;
        case 3: /* dot without digits yet */
            if (digit) state = 4;
            else return 0;
            break;
        case 4: /* fraction */
            if (digit) state = 4;
            else if (c == 'e' || c == 'E') state = 5;
            else return 0;
            break;
        case 5: /* after e */
            if (c == '+' || c == '-') state = 6;
            else if (digit) state = 7;
            else return 0;
            break;
        case 6: /* after exponent sign */
            if (digit) state = 7;
            else return 0;
            break;
        case 7: /* exponent digits */
            if (!digit) return 0;
            break;
        }
    }
    switch (state) {
    case 2:
        return 1; /* integer */
    case 4:
        return 2; /* decimal */
    case 7:
        return 3; /* scientific */
    }
    return 0;
}
