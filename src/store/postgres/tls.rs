//! TLS to PostgreSQL with rustls (ring), which the client of a remote hub already uses:
//! a few lines joining tokio-rustls to the client library's `MakeTlsConnect`, rather than a
//! crate whose channel binding would bring an X.509 parser along. SCRAM then runs without
//! channel binding (the server accepts that unless told to require it).
//!
//! `require` and `prefer` encrypt without checking the certificate (libpq's meaning: the
//! handshake's signatures are still checked against the certificate the server shows);
//! `verify-full` checks it against `sslrootcert` or the web's roots, and the host name.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::address::{Address, TlsMode};

/// What the client library connects through: rustls, set up for the address's `sslmode`.
#[derive(Clone)]
pub struct Rustls {
    config: Arc<ClientConfig>,
    host: String,
}

impl Rustls {
    /// The TLS of `address`; a root certificate file that does not read is refused, in
    /// words that name it.
    pub fn for_address(address: &Address) -> Result<Rustls, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|error| error.to_string())?;
        let config = match address.tls {
            TlsMode::VerifyFull => builder
                .with_root_certificates(roots(address)?)
                .with_no_client_auth(),
            TlsMode::Disable | TlsMode::Prefer | TlsMode::Require => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate::of(&provider)))
                .with_no_client_auth(),
        };
        Ok(Rustls {
            config: Arc::new(config),
            host: address.host_name(),
        })
    }
}

/// The roots `verify-full` trusts: the certificates of `sslrootcert`, else the web's.
fn roots(address: &Address) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    let Some(path) = &address.root_certificates else {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(roots);
    };
    let unreadable = |detail: String| format!("sslrootcert {}: {detail}", path.display());
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|error| unreadable(error.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| unreadable(error.to_string()))?;
    if certificates.is_empty() {
        return Err(unreadable("no certificate in it".to_string()));
    }
    for certificate in certificates {
        roots
            .add(certificate)
            .map_err(|error| unreadable(error.to_string()))?;
    }
    Ok(roots)
}

/// `require`'s check: any certificate, the handshake signed by its key.
#[derive(Debug)]
struct AnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl AnyCertificate {
    fn of(provider: &CryptoProvider) -> Self {
        AnyCertificate {
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signed: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, certificate, signed, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signed: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, certificate, signed, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

impl<S> MakeTlsConnect<S> for Rustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Encrypted<S>;
    type TlsConnect = Rustls;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Rustls, io::Error> {
        // The client library names the host it is connecting to; an empty name (a Unix
        // socket) keeps the address's first host.
        let host = match domain.is_empty() {
            true => self.host.clone(),
            false => domain.to_string(),
        };
        Ok(Rustls {
            config: self.config.clone(),
            host,
        })
    }
}

type Connecting<S> = Pin<Box<dyn Future<Output = io::Result<Encrypted<S>>> + Send>>;

impl<S> TlsConnect<S> for Rustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Encrypted<S>;
    type Error = io::Error;
    type Future = Connecting<S>;

    fn connect(self, stream: S) -> Connecting<S> {
        Box::pin(async move {
            let name = ServerName::try_from(self.host)
                .map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?;
            let connector = tokio_rustls::TlsConnector::from(self.config);
            let stream = connector.connect(name, stream).await?;
            Ok(Encrypted(stream))
        })
    }
}

/// A connection to the server inside TLS.
pub struct Encrypted<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for Encrypted<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Encrypted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(context, buffer)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Encrypted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(context, bytes)
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(context)
    }
}
