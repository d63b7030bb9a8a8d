int sign_element(int sign, int *modality)
{
    *modality = sign >= 0 ? sign % 3 : -1;
    switch (sign) {
    case 0: case 4: case 8:
        return 'F';
    case 1: case 5: case 9:
        return 'E';
    case 2: case 6: case 10:
        return 'A';
    case 3: case 7: case 11:
        return 'W';
    default:
        *modality = -1;
        return '?';
    }
}
