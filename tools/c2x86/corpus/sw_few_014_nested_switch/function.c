int move_cost(int terrain, int vehicle)
{
    switch (terrain) {
    case 0: /* road */
        return vehicle == 2 ? 3 : 1;
    case 1: /* grass */
        switch (vehicle) {
        case 0:
            return 2;
        case 1:
            return 3;
        default:
            return 4;
        }
    case 2: /* swamp */
        switch (vehicle) {
        case 1:
            return 9;
        case 2:
            return 2;
        }
        return 6;
    default:
        return -1;
    }
}
