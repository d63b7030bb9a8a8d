int vowel_weight_sum(const char *w)
{
    int sum = 0;
    while (*w) {
        switch (*w++) {
        case 'a':
            sum += 1;
            break;
        case 'e':
            sum += 5;
            break;
        case 'i':
            sum += 9;
            break;
        case 'o':
            sum += 15;
            break;
        }
    }
    return sum;
}
