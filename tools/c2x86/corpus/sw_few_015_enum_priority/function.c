enum priority { PRIO_LOW, PRIO_NORMAL, PRIO_HIGH, PRIO_URGENT };

int priority_weight(enum priority p, int age_days)
{
    int w;
    switch (p) {
    case PRIO_LOW:
        w = 1;
        break;
    case PRIO_NORMAL:
        w = 4;
        break;
    case PRIO_HIGH:
        w = 16;
        break;
    case PRIO_URGENT:
        return 1000;
    default:
        w = 0;
        break;
    }
    return w * (1 + age_days / 7);
}
