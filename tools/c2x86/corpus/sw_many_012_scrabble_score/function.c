int scrabble_score(const char *word)
{
    int score = 0;
    for (const char *p = word; *p; p++) {
        char c = *p;
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        switch (c) {
        case 'A': case 'E': case 'I': case 'O': case 'U':
        case 'L': case 'N': case 'S': case 'T': case 'R':
            score += 1;
            break;
        case 'D': case 'G':
            score += 2;
            break;
        case 'B': case 'C': case 'M': case 'P':
            score += 3;
            break;
        case 'F': case 'H': case 'V': case 'W': case 'Y':
            score += 4;
            break;
        case 'K':
            score += 5;
            break;
        case 'J': case 'X':
            score += 8;
            break;
        case 'Q': case 'Z':
            score += 10;
            break;
        default:
            break;
        }
    }
    return score;
}
