/* Wine 8.0 lacks bcryptprimitives.dll, whose ProcessPrng Rust's std calls for randomness.
   This stand-in fills the buffer from advapi32's RtlGenRandom (SystemFunction036). */
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG part = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, part)) return FALSE;
        data += part;
        length -= part;
    }
    return TRUE;
}
