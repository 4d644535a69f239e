package nacosd.sca;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.context.config.annotation.RefreshScope;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestTemplate;

/**
 * One Spring Cloud Alibaba app for the conformance suite, run twice: as the provider (serves
 * /hello, reads /greeting and /shared from Nacos config with live refresh) and as the consumer
 * (/call reaches the provider through Spring Cloud LoadBalancer and Nacos discovery).
 */
@SpringBootApplication
public class App {

    public static void main(String[] args) {
        SpringApplication.run(App.class, args);
    }

    @Bean
    @LoadBalanced
    RestTemplate restTemplate() {
        return new RestTemplate();
    }

    /** Values from ${spring.application.name}.yaml and the shared config, refreshed on publish. */
    @Component
    @RefreshScope
    public static class Settings {
        @Value("${greeting:none}")
        String greeting;

        @Value("${shared.value:none}")
        String shared;

        // Accessors: callers hold a scoped proxy, whose own fields stay null.
        public String greeting() {
            return greeting;
        }

        public String shared() {
            return shared;
        }
    }

    @RestController
    public static class Api {
        private final Settings settings;
        private final RestTemplate rest;

        @Value("${server.port}")
        int port;

        @Value("${provider.name:none}")
        String provider;

        Api(Settings settings, RestTemplate rest) {
            this.settings = settings;
            this.rest = rest;
        }

        @GetMapping("/hello")
        String hello() {
            return "hello from " + port;
        }

        @GetMapping("/greeting")
        String greeting() {
            return settings.greeting();
        }

        @GetMapping("/shared")
        String shared() {
            return settings.shared();
        }

        @GetMapping("/call")
        String call() {
            return rest.getForObject("http://" + provider + "/hello", String.class);
        }
    }
}
