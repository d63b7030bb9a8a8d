void matmul3(const int a[3][3], const int b[3][3], long c[3][3])
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            long s = 0;
            for (int k = 0; k < 3; k++)
                s += (long)a[i][k] * b[k][j];
            c[i][j] = s;
        }
    }
}
