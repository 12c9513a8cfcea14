/* A recording as an OTF2 archive (`-f otf2`: the format Score-P writes and Vampir,
 * Scalasca and otf2-print read), made from its database: the ranks and processes under
 * their hosts, a location per thread that made MPI calls or marker ranges and per
 * device queue; MPI calls as regions with their messages (MpiSend/MpiRecv, MpiIsend and
 * its completion, MpiIrecvRequest and MpiIrecv) and collectives (MpiCollectiveBegin/End
 * on their communicator), push/pop marker ranges as user regions, kernels and copies as
 * regions on their queue's location. docs/MPI.md says what is left out. */
#ifndef GPUPROF_WRITER_OTF2_H
#define GPUPROF_WRITER_OTF2_H

#include "util/error.h"
#include "util/strbuf.h"

/* Writes <directory>/traces.otf2 (and traces.def, traces/) from the database at db_path;
 * directory must not exist. Adds the archive's path to written. 0, or -1 with err set. */
int otf2_write(const char *db_path, const char *directory, struct strbuf *written,
	       struct error *err);

#endif
