#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt / curl_easy_getinfo / curl_share_setopt are C variadics, which Swift cannot call:
// these typed wrappers give Swift one entry point per argument type.
static inline CURLcode ccurl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_share(CURL *h, CURLSH *s) { return curl_easy_setopt(h, CURLOPT_SHARE, s); }

typedef size_t (*ccurl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*ccurl_debug_callback)(CURL *h, curl_infotype type, char *data, size_t size, void *userdata);
static inline CURLcode ccurl_setopt_write_function(CURL *h, ccurl_data_callback f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode ccurl_setopt_header_function(CURL *h, ccurl_data_callback f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLcode ccurl_setopt_debug_function(CURL *h, ccurl_debug_callback f) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, f); }
typedef int (*ccurl_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
static inline CURLcode ccurl_setopt_xferinfo_function(CURL *h, ccurl_xferinfo_callback f) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }

typedef int (*ccurl_prereq_callback)(void *clientp, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port, int conn_local_port);
static inline CURLcode ccurl_setopt_prereq_function(CURL *h, ccurl_prereq_callback f) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, f); }

static inline CURLcode ccurl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_getinfo_certinfo(CURL *h, struct curl_certinfo **v) { return curl_easy_getinfo(h, CURLINFO_CERTINFO, v); }

static inline CURLSHcode ccurl_share_lock_data(CURLSH *s, curl_lock_data d) { return curl_share_setopt(s, CURLSHOPT_SHARE, d); }
typedef void (*ccurl_lock_function)(CURL *h, curl_lock_data d, curl_lock_access a, void *userptr);
typedef void (*ccurl_unlock_function)(CURL *h, curl_lock_data d, void *userptr);
static inline CURLSHcode ccurl_share_set_lock(CURLSH *s, ccurl_lock_function f) { return curl_share_setopt(s, CURLSHOPT_LOCKFUNC, f); }
static inline CURLSHcode ccurl_share_set_unlock(CURLSH *s, ccurl_unlock_function f) { return curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, f); }
static inline CURLSHcode ccurl_share_set_userdata(CURLSH *s, void *p) { return curl_share_setopt(s, CURLSHOPT_USERDATA, p); }
#endif
