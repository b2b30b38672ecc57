/* SPDX-License-Identifier: Apache-2.0 */
/* The build's versions, for the library's own use (the API has
 * minivmm_version()). */
#ifndef MINIVMM_VMM_VERSION_H
#define MINIVMM_VMM_VERSION_H

/* The build's release (the VERSION file, plus the git commit in a
 * checkout), as the first line of `minivmm --version` says it. */
const char *version_build(void);
/* The interface version: "<major>.<minor>" (include/minivmm.h). */
const char *version_api(void);

#endif
