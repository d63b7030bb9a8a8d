int suit_points(char suit, int rank)
{
    int color;
    switch (suit) {
    case 'H':
    case 'D':
        color = 1;
        break;
    case 'S':
    case 'C':
        color = 2;
        break;
    default:
        return -1;
    }
    return color * 100 + rank;
}
