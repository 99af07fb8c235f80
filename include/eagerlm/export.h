/* EAGERLM_API marks what libeagerlm exports. The library is built with hidden visibility, so
 * everything else stays internal; consumers see the same attribute, which on ELF platforms
 * means the same thing when importing. Shared by the C and the C++ headers. */
#ifndef EAGERLM_EXPORT_H
#define EAGERLM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define EAGERLM_API __attribute__((visibility("default")))
#else
#define EAGERLM_API
#endif

#endif /* EAGERLM_EXPORT_H */
