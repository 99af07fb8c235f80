// The thread count used by eagerlm's CPU kernels (OpenMP) and by OpenBLAS.
#pragma once

namespace eagerlm {

int hardware_threads();       // cores available to this process
int num_threads();            // current setting
void set_num_threads(int n);  // n >= 1; OpenMP threads (OpenBLAS itself runs single-threaded)

}  // namespace eagerlm
