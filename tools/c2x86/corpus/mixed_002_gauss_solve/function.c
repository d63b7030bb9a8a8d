int gauss_solve3(const double A[3][3], const double b[3], double x[3])
{
    double m[3][4];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            m[i][j] = A[i][j];
        m[i][3] = b[i];
    }
    for (int col = 0; col < 3; col++) {
        int piv = col;
        double best = m[col][col] < 0.0 ? -m[col][col] : m[col][col];
        for (int r = col + 1; r < 3; r++) {
            double v = m[r][col] < 0.0 ? -m[r][col] : m[r][col];
            if (v > best) {
                best = v;
                piv = r;
            }
        }
        if (best < 1e-12)
            return -1;
        if (piv != col) {
            for (int j = 0; j < 4; j++) {
                double t = m[col][j];
                m[col][j] = m[piv][j];
                m[piv][j] = t;
            }
        }
        for (int r = col + 1; r < 3; r++) {
            double f = m[r][col] / m[col][col];
            for (int j = col; j < 4; j++)
                m[r][j] -= f * m[col][j];
        }
    }
    for (int i = 2; i >= 0; i--) {
        double s = m[i][3];
        for (int j = i + 1; j < 3; j++)
            s -= m[i][j] * x[j];
        x[i] = s / m[i][i];
    }
    return 0;
}
