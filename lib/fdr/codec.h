/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Library-internal decoders paired with the public encoders. */
#ifndef XRAYFDR_LIB_FDR_CODEC_H
#define XRAYFDR_LIB_FDR_CODEC_H

#include <stdbool.h>
#include <stdint.h>

#include <xrayfdr/fdr.h>

void fdr_decode_file_header(const uint8_t *p, bool be,
			    struct xrayfdr_file_header *h);
/* Decode any kind; an unknown kind leaves every field but kind zero. */
void fdr_decode_metadata(const uint8_t *p, bool be, unsigned int version,
			 struct xrayfdr_metadata *md);

#endif
