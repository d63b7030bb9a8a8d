int level_bonus(int level)
{
    int bonus = 0;
    switch (level) {
    case 3:
        bonus += 50;
        /* fall through */
    case 2:
        bonus += 20;
        /* fall through */
    case 1:
        bonus += 5;
        break;
    default:
        bonus = level > 3 ? 100 : 0;
    }
    return bonus;
}
