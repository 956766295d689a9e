package dev.cugaflo.flowable;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * A minimal Flowable server for cuga-flo's tests: the BPMN engine, its REST API
 * and the external worker job REST API, behind HTTP basic auth with a single
 * in-memory user (FLOWABLE_USER / FLOWABLE_PASSWORD, default admin / test).
 */
@SpringBootApplication
public class FlowableServerApplication {

    public static void main(String[] args) {
        SpringApplication.run(FlowableServerApplication.class, args);
    }

    @Bean
    public UserDetailsService users(
            @Value("${FLOWABLE_USER:admin}") String user,
            @Value("${FLOWABLE_PASSWORD:test}") String password) {
        return new InMemoryUserDetailsManager(
                User.withUsername(user).password(password).roles("ADMIN", "REST").build());
    }

    /**
     * Plain-text passwords. With Spring's default DelegatingPasswordEncoder a
     * "{noop}" password gets upgraded to bcrypt on the first login, and every
     * later request pays ~100 ms for the bcrypt check.
     */
    @Bean
    public PasswordEncoder plainPasswords() {
        return new PasswordEncoder() {
            @Override
            public String encode(CharSequence raw) {
                return raw.toString();
            }

            @Override
            public boolean matches(CharSequence raw, String encoded) {
                return encoded != null && MessageDigest.isEqual(
                        raw.toString().getBytes(StandardCharsets.UTF_8),
                        encoded.getBytes(StandardCharsets.UTF_8));
            }
        };
    }

    @Bean
    public SecurityFilterChain restSecurity(HttpSecurity http) throws Exception {
        http.csrf(csrf -> csrf.disable())
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .authorizeHttpRequests(auth -> auth.anyRequest().authenticated())
                .httpBasic(Customizer.withDefaults());
        return http.build();
    }
}
