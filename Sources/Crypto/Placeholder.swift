import COpenSSL
