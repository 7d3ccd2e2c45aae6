# The FDR format library: encoders, writer, streaming verifying reader
LIB_SRCS += lib/fdr/codec.c lib/fdr/frame.c lib/fdr/reader.c lib/fdr/writer.c
