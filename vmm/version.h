/* The build's versions, for the library's own use (the API has
 * minivmm_version()). */
#ifndef MINIVMM_VMM_VERSION_H
#define MINIVMM_VMM_VERSION_H

/* The build's git describe, as `minivmm --version` prints it. */
const char *version_build(void);
/* The interface version: "<major>.<minor>" (include/minivmm.h). */
const char *version_api(void);

#endif
