/* SPDX-License-Identifier: Apache-2.0 */
/* minivmm_version(): the interface version and the build's git describe. */
#include "minivmm.h"
#include "vmm/version.h"

#ifndef MINIVMM_VERSION
#define MINIVMM_VERSION "unknown"
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

const char *minivmm_version(void)
{
	return STR(MINIVMM_API_VERSION_MAJOR) "." STR(MINIVMM_API_VERSION_MINOR) " (" MINIVMM_VERSION ")";
}

const char *version_build(void)
{
	return MINIVMM_VERSION;
}

const char *version_api(void)
{
	return STR(MINIVMM_API_VERSION_MAJOR) "." STR(MINIVMM_API_VERSION_MINOR);
}
