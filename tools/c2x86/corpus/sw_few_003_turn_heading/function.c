int turn_heading(int heading, char cmd)
{
    switch (cmd) {
    case 'L':
        heading += 3;
        break;
    case 'R':
        heading += 1;
        break;
    case 'U':
        heading += 2;
        break;
    default:
        break;
    }
    return heading % 4;
}
