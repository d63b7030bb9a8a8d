int keypad_digits(char *s)
{
    int changed = 0;
    for (; *s; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        char d;
        switch (c) {
        case 'a': case 'b': case 'c': d = '2'; break;
        case 'd': case 'e': case 'f': d = '3'; break;
        case 'g': case 'h': case 'i': d = '4'; break;
        case 'j': case 'k': case 'l': d = '5'; break;
        case 'm': case 'n': case 'o': d = '6'; break;
        case 'p': case 'q': case 'r': case 's': d = '7'; break;
        case 't': case 'u': case 'v': d = '8'; break;
        case 'w': case 'x': case 'y': case 'z': d = '9'; break;
        default:
            continue;
        }
        *s = d;
        changed++;
    }
    return changed;
}
